import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminApi } from '../common/auth/admin-api.decorator';
import { Actor, CurrentActor } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { CreateProductDto, ProductDto, UpdateProductDto } from './dto/product.dto';
import { ProductsService } from './products.service';

@ApiTags('admin: products')
@AdminApi()
@Controller('api/v1/admin/products')
export class ProductsController {
  constructor(private readonly products: ProductsService) {}

  @Get()
  @ApiOperation({ summary: 'List all products' })
  @ApiOkResponse({ type: [ProductDto] })
  async list(): Promise<ProductDto[]> {
    return (await this.products.listProducts()).map((product) => ProductDto.from(product));
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get one product' })
  @ApiOkResponse({ type: ProductDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  async get(@Param('id', IdParamPipe) id: number): Promise<ProductDto> {
    return ProductDto.from(await this.products.getProduct(id));
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a product' })
  @ApiCreatedResponse({ type: ProductDto })
  @ApiConflictResponse({ description: 'Duplicate code or key_prefix', type: ErrorResponseDto })
  async create(@Body() body: CreateProductDto, @CurrentActor() actor: Actor): Promise<ProductDto> {
    return ProductDto.from(await this.products.createProduct(body, actor));
  }

  @Put(':id')
  @ApiOperation({ summary: 'Change a product (partial)' })
  @ApiOkResponse({ type: ProductDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'Duplicate code or key_prefix', type: ErrorResponseDto })
  async update(@Param('id', IdParamPipe) id: number, @Body() body: UpdateProductDto, @CurrentActor() actor: Actor): Promise<ProductDto> {
    return ProductDto.from(await this.products.updateProduct(id, body, actor));
  }
}
